/** Who is calling: the key's id and human name, never the key itself. Set as `request.user`. */
export interface ApiKeyIdentity {
  id: string;
  name: string;
}
