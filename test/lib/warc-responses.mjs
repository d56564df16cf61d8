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

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

function base32(bytes) {
	let bits = 0, acc = 0, out = '';
	for (const b of bytes) {
		acc = (acc << 8) | b;
		bits += 8;
		while (bits >= 5) {
			out += ALPHABET[(acc >>> (bits - 5)) & 31];
			bits -= 5;
		}
		acc &= (1 << bits) - 1;
	}
	if (bits > 0) out += ALPHABET[(acc << (5 - bits)) & 31];
	return out;
}

function dechunk(bytes) {
	const parts = [];
	let i = 0;
	while (i < bytes.length) {
		const nl = bytes.indexOf(10, i);
		if (nl < 0) break;
		const size = parseInt(Buffer.from(bytes.subarray(i, nl)).toString('latin1'), 16);
		if (Number.isNaN(size)) throw new Error('bad chunk size');
		i = nl + 1;
		if (size === 0) break;
		parts.push(bytes.subarray(i, i + size));
		i += size + 2;
	}
	return Buffer.concat(parts);
}

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
