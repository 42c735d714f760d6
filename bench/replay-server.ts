/**
 * A plain HTTP server that answers recorded GraphQL requests with their recorded text, and nothing else: the benchmark's
 * upstream when it measures the exporter's side alone (the floor, and the replayed export). It runs as its own process,
 * so that serving never competes with the measured client for the same thread.
 *
 *   node --import tsx bench/replay-server.ts PAGES.json   prints `listening <url>`, then serves until killed
 *
 * PAGES.json maps `<path>\n<request body>` to the answer's text.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const pages = new Map<string, string>(Object.entries(JSON.parse(readFileSync(process.argv[2]!, 'utf8'))));
let served = 0;
let missed = 0;
const server = createServer(async (req, res) => {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  if (req.url === '/_replay/stats') {
    const cpu = process.cpuUsage();
    const cpuMs = (cpu.user + cpu.system) / 1000;
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ served, missed, cpuMs }));
    return;
  }
  const text = pages.get(`${req.url}\n${Buffer.concat(chunks).toString('utf8')}`);
  if (text === undefined) {
    missed++;
    res.writeHead(500).end('not recorded');
    return;
  }
  served++;
  res.writeHead(200, { 'content-type': 'application/json' }).end(text);
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening http://127.0.0.1:${(server.address() as { port: number }).port}\n`);
});
