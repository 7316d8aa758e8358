// The one line printed when the service cannot start. A native module that does not load is almost
// always one built for another Node.js version (after switching Node): say how to fix that.
export function startFailureMessage(error: unknown): string {
  const message = (error instanceof Error ? error.message : String(error)).replace(/\s*\n\s*/g, ' ');
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ERR_DLOPEN_FAILED' || message.includes('NODE_MODULE_VERSION')) {
    return `failed to start: a native module does not load in Node.js ${process.version} (built for another Node.js version?); run npm rebuild. ${message}`;
  }
  return `failed to start: ${message}`;
}
