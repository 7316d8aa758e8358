// A broker feed's socket once it is given up. Its listeners stay attached elsewhere, so a late frame would
// still reach the feed and a late error would be thrown as unhandled: both are cut here.
import WebSocket from 'ws';

/** Stops reading the socket and closes it: with `code` when it is open (a close the broker reads), else at once. */
export function discardSocket(socket: WebSocket, code: number | undefined): void {
  socket.removeAllListeners('message');
  socket.on('error', () => {});
  if (code !== undefined && socket.readyState === WebSocket.OPEN) socket.close(code);
  else socket.terminate();
}
