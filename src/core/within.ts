// State reads that may touch a shared store (Redis) get a deadline, so status and metrics answer in
// milliseconds even when the store hangs: a late answer becomes "unknown", never a slow response.

const STATE_READ_DEADLINE_MS = 250;

/** The promise's value, or `fallback` when it rejects or takes longer than `ms`. */
export async function within<T, F>(promise: Promise<T>, fallback: F, ms = STATE_READ_DEADLINE_MS): Promise<T | F> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<F>((resolve) => {
    timer = setTimeout(() => resolve(fallback), ms);
  });
  try {
    return await Promise.race([promise.catch(() => fallback), late]);
  } finally {
    clearTimeout(timer);
  }
}
