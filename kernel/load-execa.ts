/**
 * execa, loaded the first time a command starts a process. It is ~100 modules (~100 ms to load),
 * which a static import made every command pay, `explain` and `config` included.
 */
export const loadExeca = async () => (await import('execa')).execa;
