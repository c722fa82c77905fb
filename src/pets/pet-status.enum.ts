export enum PetStatus {
  Available = 'available',
  Pending = 'pending',
  Sold = 'sold',
}

export const PET_STATUSES: readonly PetStatus[] = Object.values(PetStatus);

/** How validation messages name the accepted values: `available, pending, sold`. */
export const PET_STATUS_LIST = PET_STATUSES.join(', ');
