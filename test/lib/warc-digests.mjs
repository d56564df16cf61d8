// An independent check of WARC digests for test/sc-warc.bats: the records
// as warcio's parser reads them, the digests recomputed with node:crypto
// from WARC/1.1's definitions (the block: every byte after the header; the
// payload of an HTTP record: the entity body after the HTTP header, with
// a chunked transfer coding removed).  Shares no code with sc.
// Usage: node warc-digests.mjs FILE...  Prints "N records, M digests
// checked" and exits 1 if any digest does not match.
import { createReadStream } from 'node:fs';
import { createHash } from 'node:crypto';
import { WARCParser } from '../npm/node_modules/warcio/dist/index.js';
import { base32, dechunk } from './warc-common.mjs';

function sha1(bytes) {
	return 'sha1:' + base32(createHash('sha1').update(bytes).digest());
}

function indexOf(hay, needle) {
	outer: for (let i = 0; i + needle.length <= hay.length; i++) {
		for (let j = 0; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer;
		return i;
	}
	return -1;
}

let records = 0, checked = 0, bad = 0;
for (const file of process.argv.slice(2)) {
	const parser = new WARCParser(createReadStream(file), { parseHttp: false });
	for await (const record of parser) {
		const block = await record.readFully();
		const type = record.warcType;
		const where = `${file}:${parser.offset} ${type}`;
		records++;
		const blockDigest = record.warcBlockDigest;
		if (blockDigest) {
			checked++;
			if (sha1(block) !== blockDigest) {
				console.log(`${where}: block digest ${blockDigest}, computed ${sha1(block)}`);
				bad++;
			}
		}
		const payloadDigest = record.warcPayloadDigest;
		const http = (record.warcContentType || '').startsWith('application/http');
		if (payloadDigest && http && type !== 'revisit') {
			const end = indexOf(block, [13, 10, 13, 10]);
			const head = Buffer.from(block.subarray(0, end)).toString('latin1');
			let payload = block.subarray(end + 4);
			if (/^transfer-encoding:\s*chunked\s*$/im.test(head)) payload = dechunk(payload);
			checked++;
			if (sha1(payload) !== payloadDigest) {
				console.log(`${where}: payload digest ${payloadDigest}, computed ${sha1(payload)}`);
				bad++;
			}
		}
	}
}
console.log(`${records} records, ${checked} digests checked, ${bad} bad`);
process.exit(bad ? 1 : 0);
