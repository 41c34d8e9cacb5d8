/** How to start one client run; `baseUrl` may still hold the bridge's port placeholder. */
export interface ClientLaunch {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
}

export interface LayoutInput {
  /** Private work directory (mode 0700) that holds every home and copy of this run. */
  workDir: string;
  sourcePath: string;
  sessionId: string;
  clientBin: string;
  probe: string;
}

export interface PreparedClient {
  /** Where the copy of the transcript that the client resumes was placed. */
  copyPath: string;
  launch(baseUrl: string): ClientLaunch;
}

/** Session ids become file names in the throwaway homes; anything but an id-shaped string is refused. */
export const SESSION_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9-]{0,127}$/;
