// How long the service drains on SIGTERM or SIGINT before it exits regardless (server.ts): requests in flight
// finish, streams end with a last event, stores close. Orchestrators wait at least this after their signal
// (the Kubernetes manifest's terminationGracePeriodSeconds, compose's stop_grace_period).
export const SHUTDOWN_DRAIN_MS = 15_000;
