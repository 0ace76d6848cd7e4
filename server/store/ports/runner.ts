// What a runner is, as every store adapter reads and writes it.

export interface RunnerInfo {
  name?: string;
  version?: string;
  revision?: string;
  platform?: string;
  architecture?: string;
  executor?: string;
  [k: string]: unknown;
}

export interface Runner {
  id: number;
  token: string;
  description: string;
  is_shared: boolean;
  project_id: number | null;
  active: boolean;
  run_untagged: boolean;
  locked: boolean;
  tag_list: string[];
  info: RunnerInfo;
  online: boolean;
  contacted_at: number | null;
  created_at: number;
}

export interface NewRunner {
  description: string;
  is_shared: boolean;
  project_id: number | null;
  run_untagged: boolean;
  locked: boolean;
  tag_list: string[];
  info: RunnerInfo;
  active?: boolean;
}

/** How stale a stored contact time may get while a runner keeps polling. */
export const CONTACT_WRITE_MS = 3000;
