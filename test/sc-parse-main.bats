#!/usr/bin/env bats
# sc-parse --main, --markdown, --simhash: the main content of pages with
# heavy boilerplate, the Markdown of every element, the text of the Markdown
# equal to the text (test/maintext/md2text.py, written apart from the C),
# near-duplicates by simhash, the count contract, the Debian documentation.

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
load 'lib/page'

bats_require_minimum_version 1.5.0

FIX="$BATS_TEST_DIRNAME/maintext"

setup() {
	cd "$BATS_TEST_TMPDIR" || return
}

# rec FILE: an ok fetch record of a fixture page.
rec() {
	page_record "$FIX/$1" "https://example.org/2026/$1"
}

@test "main text: the article's sentences, none of the boilerplate; title, byline, published" {
	{ rec blog.html; rec news.html; } >in.jsonl
	sc-parse --main <in.jsonl >out.jsonl
	[ "$(wc -l <out.jsonl)" -eq 2 ]
	run jq -r 'select(.url|endswith("blog.html")) | .text' out.jsonl
	assert_output --partial 'Rivers are patient sculptors.'
	assert_output --partial 'The next time you stand at the rim of a canyon'
	assert_output --partial 'Rock type writes the details.'
	for b in 'We use cookies' 'Popular posts' 'Subscribe to our newsletter' 'Share on Twitter' \
		'Related stories' 'Great article' 'Copyright 2026' 'Advertisement' 'About us'; do
		refute_output --partial "$b"
	done
	run jq -c 'select(.url|endswith("blog.html")) | [.title, .byline, .published]' out.jsonl
	assert_output '["How Rivers Carve Canyons","Mara Quill","2026-03-14T09:30:00Z"]'
	run jq -r 'select(.url|endswith("news.html")) | .text' out.jsonl
	assert_output --partial 'The city council voted on Tuesday evening'
	assert_output --partial 'promised regular public meetings'
	for b in 'uses cookies' 'Politics' 'Read more' 'Most read' 'Comments are closed' 'Harbour Street' 'Facebook'; do
		refute_output --partial "$b"
	done
	run jq -c 'select(.url|endswith("news.html")) | [.title, .byline, .published]' out.jsonl
	assert_output '["City council approves new tram line","Jonas Brek","2026-05-02T18:00:00+02:00"]'
}

@test "markdown: headings, lists nested and ordered, links absolute, emphasis, code, a table, images, a quote" {
	rec elements.html | sc-parse --markdown >out.jsonl
	jq -r .markdown out.jsonl >md.txt
	cat >want.txt <<'MD'
# Every element

A paragraph with *emphasis*, **strong words**, `inline_code()` and [a relative link](https://docs.example/guide/page.html#part).

## Lists

- first item
- second item
  1. nested one
  2. nested two
- third item

3. three
4. four

### Code

```python
def hello():
    return "*not emphasis*"
```

| Name | Value |
|---|---|
| alpha | 1 \| 2 |
| beta | *two* |

![A river](https://docs.example/img/river.png) and

> Quoted words.
>
> A second quoted paragraph.

Special characters: 5 \* 3 = 15, a\_b, \[brackets\] and \#hash.
MD
	diff want.txt md.txt
	run jq -r 'has("text")' out.jsonl
	assert_output false
}

@test "the text of the markdown is the text: the fixtures and the Debian documentation" {
	{ rec blog.html; rec news.html; rec elements.html; } >in.jsonl
	find /usr/share/doc -name '*.html' -type f | sort | awk 'NR % 9 == 0' | head -150 | while read -r f; do
		jq -nc --rawfile b "$f" --arg u "file://$f" '{url: $u, ok: true, status: 200, content_type: "text/html", body: $b}'
	done >>in.jsonl
	[ "$(wc -l <in.jsonl)" -ge 60 ]
	sc-parse --main --markdown <in.jsonl >out.jsonl
	run /usr/bin/python3 "$FIX/md2text.py" <out.jsonl
	assert_success
	refute_output --regexp '^[^s]'
	[ "${#lines[@]}" -eq "$(wc -l <in.jsonl)" ]
}

# hamming HEX HEX: the bits in which two simhashes differ.
hamming() {
	/usr/bin/python3 -c 'import sys; print(bin(int(sys.argv[1], 16) ^ int(sys.argv[2], 16)).count("1"))' "$1" "$2"
}

@test "simhash: 16 hex digits; a near-identical page within 3 bits, a different one more than 10" {
	rec blog.html >in.jsonl
	sed 's/Rivers are patient sculptors/Rivers are tireless sculptors/; s/Climate sets/Weather sets/; s/Copyright 2026/Copyright 2025/' "$FIX/blog.html" >near.html
	jq -nc --rawfile b near.html '{url: "https://example.org/near", ok: true, status: 200, content_type: "text/html", body: $b}' >>in.jsonl
	rec news.html >>in.jsonl
	sc-parse --simhash <in.jsonl >out.jsonl
	mapfile -t h < <(jq -r .simhash out.jsonl)
	[[ "${h[0]}" =~ ^[0-9a-f]{16}$ ]]
	[ "$(hamming "${h[0]}" "${h[1]}")" -le 3 ]
	[ "$(hamming "${h[0]}" "${h[2]}")" -gt 10 ]
	run jq -c 'keys' out.jsonl
	refute_output --partial '"text"'
}

@test "count contract: a malformed line, a failed record, a non-HTML body each give one record, with nulls" {
	{
		echo '{not json'
		echo '{"url":"https://example.org/x","ok":false,"error":{"kind":"timeout","message":"t"}}'
		echo '{"url":"https://example.org/j","ok":true,"status":200,"content_type":"application/json","body":"{\"a\":1}"}'
		rec news.html
	} >in.jsonl
	run --separate-stderr sc-parse --main --markdown --simhash <in.jsonl
	[ "${#lines[@]}" -eq 4 ]
	run jq -c '[.text, .markdown, .simhash, .title]' <<<"$output"
	assert_line --index 0 '[null,null,null,null]'
	assert_line --index 1 '[null,null,null,null]'
	assert_line --index 2 '[null,null,null,null]'
	refute_line --index 3 --partial 'null,null'
}

@test "usage: -f text with --main is an error; --forms does not combine; --require text works" {
	run -2 sc-parse --main -f text=p </dev/null
	assert_output --partial 'choose another name'
	run -2 sc-parse --forms --main </dev/null
	rec elements.html | sc-parse --main -f h=h1 --require text >out.jsonl
	run jq -c '[.h, .ok]' out.jsonl
	assert_output '["Every element",true]'
}

@test "the Debian documentation: the text holds the article's region (Sphinx's role=main)" {
	n=0
	for f in tutorial/classes.html library/json.html reference/datamodel.html howto/logging.html; do
		p=/usr/share/doc/python3.11/html/$f
		[ -f "$p" ] || continue
		n=$((n + 1))
		jq -nc --rawfile b "$p" --arg u "file://$p" '{url: $u, ok: true, status: 200, content_type: "text/html", body: $b}'
	done >in.jsonl
	[ "$n" -ge 3 ]
	sc-parse --main -f region='div.body' <in.jsonl >out.jsonl
	run jq -r 'select((.region | gsub("¶"; "") | gsub("\\s+"; " ") | split(" ")[0:40] | join(" ")) as $s | (.text | gsub("\\s+"; " ") | contains($s)) | not) | .url' out.jsonl
	assert_output ''
	run jq -r 'select(.text | test("Navigation|Quick search|Previous topic")) | .url' out.jsonl
	assert_output ''
}

@test "sc-render's records: the rendered member kept, links against the page's base, nothing of sc-fetch's needed" {
	jq -nc --rawfile b "$FIX/elements.html" '{url: "https://start.example/", final_url: "https://start.example/moved/", status: 200, ok: true,
		content_type: "text/html", body: $b, rendered: {ms: 120, requests: 3, failed: 0, blocked: 0}}' |
		sc-parse --main --markdown --simhash >out.jsonl
	run jq -c '[.rendered.ms, .title, (.text | contains("nested two")), (.markdown | contains("(https://docs.example/guide/page.html#part)")), (.simhash | length)]' out.jsonl
	assert_output '[120,"Every element",true,true,16]'
}
