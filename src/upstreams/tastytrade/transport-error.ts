// Transport failures towards Tastytrade in the broker's terms: "cannot reach it" is 503 BROKER_UNAVAILABLE.
import { ApiError, UpstreamTransportError } from '../../core/errors.js';

export function transportError(error: unknown): ApiError {
  if (!(error instanceof UpstreamTransportError))
    return error instanceof ApiError ? error : new ApiError('UPSTREAM_ERROR', 'the Tastytrade call failed');
  switch (error.failure) {
    case 'timeout':
      return new ApiError('UPSTREAM_TIMEOUT', 'Tastytrade did not answer in time');
    case 'unreachable':
      return new ApiError('BROKER_UNAVAILABLE', 'Tastytrade is not reachable', { retryAfterSeconds: 5, cause: error });
    case 'reset':
      return new ApiError('BROKER_UNAVAILABLE', 'Tastytrade closed the connection', { retryAfterSeconds: 5, cause: error });
    case 'too_large':
      return new ApiError('UPSTREAM_ERROR', 'Tastytrade sent a body larger than allowed');
    case 'proxy':
    case 'certificate':
      // The message names the proxy or the certificate problem, and the setting to change.
      return new ApiError('BROKER_UNAVAILABLE', error.message, { retryAfterSeconds: 5, cause: error, publicMessage: error.publicMessage });
  }
}
