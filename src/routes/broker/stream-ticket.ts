// GET /api/broker/stream-ticket -> { ticket, expiresAt }: a one-time ticket that admits one EventSource to the
// stream's broker topics (`/api/stream?brokerQuotes=…&ticket=…`), for a page that reads broker data with
// BROKER_TOKEN but cannot send it on a stream (see src/broker/stream-tickets.ts).
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { TICKET_TTL_MS } from '../../broker/stream-tickets.js';
import { errorResponses, type TypeBoxTypeProvider } from '../schemas.js';
import { brokerDataConfig, brokerPreflight } from './broker-data.js';

const TicketResponse = Type.Object(
  {
    ticket: Type.String({ description: 'Put it in the stream URL as `ticket=`; it admits one stream, once.' }),
    expiresAt: Type.String({ format: 'date-time', description: `Unused, it expires ${TICKET_TTL_MS / 1000} s after it was issued.` }),
  },
  { additionalProperties: false, $id: 'BrokerStreamTicketResponse' },
);

export function streamTicketRoute(app: FastifyInstance): void {
  const { streamTickets } = app.deps;
  brokerPreflight(app, '/stream-ticket');
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/stream-ticket',
    {
      config: brokerDataConfig(app),
      schema: {
        operationId: 'getBrokerStreamTicket',
        summary: 'A one-time ticket for broker stream topics',
        description:
          "A browser's EventSource cannot send Authorization: a page that reads broker data with BROKER_TOKEN gets a ticket here (with the token), then opens `/api/stream?brokerQuotes=…&ticket=…`. A ticket admits one stream, once, within 30 s, on any replica; ask for a new one for each (re)connection. Callers on a network BROKER_ALLOW_FROM lists need none.",
        tags: ['broker'],
        response: { 200: TicketResponse, ...errorResponses(401, 403, 429) },
      },
    },
    async (_request, reply) => {
      reply.header('cache-control', 'no-store');
      return streamTickets.issue();
    },
  );
}
