// Keeps the hidden classes of Node's nextTick queue entries alive for the life of the process; imported
// first by server.ts, so it runs before anything else is loaded.
//
// process.nextTick builds each queue entry as an object literal with computed keys, and V8 remembers,
// per property, the hidden class (map) the entry had when that property was defined. Those maps are held
// weakly: full GCs that run while no entry is queued free them, the next entry gets new ones, and V8
// then marks the sites megamorphic for good, so every later nextTick defines its five properties through
// the runtime (about 1 µs instead of 0.1 µs). Answering one HTTP request takes about seven nextTicks
// inside Node, so a server that met such GCs while starting answers a cache hit about a quarter slower
// for its whole life. That was 5 of 6 sampled starts of this service, whose loading runs two full GCs
// in its first second, and almost never a small script. Holding one real entry keeps the maps alive.
import { createHook } from 'node:async_hooks';

/** A nextTick queue entry, held for the life of the process and never read: holding it is the point. */
// biome-ignore lint/correctness/noUnusedVariables: held, never read; holding it is what keeps the maps alive.
let pinned: object | undefined;

function pinNextTickShape(): void {
  // An init hook is the one public way to reach a queue entry (it is the hook's resource). It is enabled
  // for this single nextTick, so nothing else ever runs with async hooks on.
  const hook = createHook({
    init(_asyncId, type, _triggerAsyncId, resource) {
      if (type === 'TickObject') pinned ??= resource;
    },
  });
  hook.enable();
  process.nextTick(() => {});
  hook.disable();
}

pinNextTickShape();
