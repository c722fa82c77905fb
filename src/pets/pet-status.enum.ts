export enum PetStatus {
  Available = 'available',
  Pending = 'pending',
  Sold = 'sold',
}

export const PET_STATUSES: readonly PetStatus[] = Object.values(PetStatus);
