// What a project is, as every store adapter reads and writes it.

export interface Project {
  id: number;
  name: string;
  runners_token: string;
  ci_token: string;
  shared_runners_enabled: boolean;
  build_timeout: number;
  created_at: number;
}
