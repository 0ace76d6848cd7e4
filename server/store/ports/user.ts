// What a user is, as every store adapter reads and writes it.

export interface User {
  id: number;
  username: string;
  admin: boolean;
  private_token: string;
  created_at: number;
}
