// Every record of WARC files as warcio's parser reads them, one JSON
// object a line, for test/sc-render-warc.bats: its type, target URI,
// record ID, WARC-Concurrent-To and WARC-Refers-To, WARC-Protocol, the
// record's Content-Type; for a response, its HTTP status, header names
// (lowercased) and the SHA-1 in hex of its payload (the body after the
// HTTP header, a chunked transfer coding removed); for other records the
// SHA-1 in hex of the block, and a metadata record's text.  Shares no code
// with sc.  Usage: node warc-records.mjs FILE...
import { createReadStream } from 'node:fs';
import { createHash } from 'node:crypto';
import { WARCParser } from '../npm/node_modules/warcio/dist/index.js';
import { dechunk } from './warc-common.mjs';

const sha1 = (b) => createHash('sha1').update(b).digest('hex');

for (const file of process.argv.slice(2)) {
	const parser = new WARCParser(createReadStream(file), { parseHttp: false });
	for await (const record of parser) {
		const block = Buffer.from(await record.readFully());
		const h = record.warcHeaders;
		const out = {
			type: record.warcType,
			uri: record.warcTargetURI || null,
			id: h.headers.get('WARC-Record-ID'),
			concurrent: h.headers.get('WARC-Concurrent-To') || null,
			refers: h.headers.get('WARC-Refers-To') || null,
			protocol: h.headers.get('WARC-Protocol') || null,
			content_type: h.headers.get('Content-Type') || null,
		};
		if (out.type === 'response' || out.type === 'request') {
			const end = block.indexOf('\r\n\r\n');
			const head = block.subarray(0, end).toString('latin1').split('\r\n');
			const body = block.subarray(end + 4);
			const names = head.slice(1).map((l) => l.slice(0, l.indexOf(':')).toLowerCase());
			const chunked = /^transfer-encoding:\s*chunked\s*$/im.test(head.join('\n'));
			out.first = head[0];
			out.headers = names;
			if (out.type === 'response') out.status = Number(head[0].split(' ')[1]);
			out.sha1 = sha1(chunked ? dechunk(body) : body);
		} else {
			out.sha1 = sha1(block);
			if (out.type === 'metadata') out.text = block.toString('utf8');
		}
		console.log(JSON.stringify(out));
	}
}
