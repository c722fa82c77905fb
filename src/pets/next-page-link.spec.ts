import { nextPageLink } from './next-page-link.js';
import { PetStatus } from './pet-status.enum.js';

describe('nextPageLink', () => {
  it('repeats the limit and adds the cursor', () => {
    expect(nextPageLink('/v1/pets', 20, undefined, 'abc_-1')).toBe('</v1/pets?limit=20&cursor=abc_-1>; rel="next"');
  });

  it('repeats the status filter', () => {
    expect(nextPageLink('/v1/pets', 7, PetStatus.Sold, 'c')).toBe(
      '</v1/pets?limit=7&status=sold&cursor=c>; rel="next"',
    );
  });
});
