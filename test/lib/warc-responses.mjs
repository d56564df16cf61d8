// The response records of WARC files as warcio's parser reads them, one
// tab-separated line each, for test/warc-wget.bats: the record's WARC
// version, its target URI (warcio drops wget's angle brackets), the HTTP
// status, the payload's SHA-1 in hex (the entity body after the HTTP
// header, a chunked transfer coding removed; content codings kept), the
// SHA-1 in hex of the body as it is in the block (chunk framing and all),
// and whether the record's WARC-Payload-Digest names the payload
// ("payload"), the body as in the block ("block-body") or neither.
// Shares no code with sc.  Usage: node warc-responses.mjs FILE...
import { createReadStream } from 'node:fs';
import { createHash } from 'node:crypto';
import { WARCParser } from '../npm/node_modules/warcio/dist/index.js';
import { base32, dechunk } from './warc-common.mjs';

for (const file of process.argv.slice(2)) {
	const parser = new WARCParser(createReadStream(file), { parseHttp: false });
	for await (const record of parser) {
		const block = Buffer.from(await record.readFully());
		if (record.warcType !== 'response') continue;
		const end = block.indexOf('\r\n\r\n');
		const head = block.subarray(0, end).toString('latin1');
		const body = block.subarray(end + 4);
		const chunked = /^transfer-encoding:\s*chunked\s*$/im.test(head);
		const payload = chunked ? dechunk(body) : body;
		const status = head.split('\r\n')[0].split(' ')[1];
		const sha1 = (b) => createHash('sha1').update(b).digest();
		const declared = record.warcPayloadDigest;
		let names = 'neither';
		if (declared === 'sha1:' + base32(sha1(payload))) names = 'payload';
		else if (declared === 'sha1:' + base32(sha1(body))) names = 'block-body';
		console.log([record.warcHeaders.statusline, record.warcTargetURI, status,
			sha1(payload).toString('hex'), sha1(body).toString('hex'), names].join('\t'));
	}
}
