/**
 * execa, loaded the first time a command starts a process. It is ~100 modules (~100 ms to load),
 * which a static import makes every command pay, `explain` and `vault` included.
 */
export const loadExeca = async () => (await import('execa')).execa;
