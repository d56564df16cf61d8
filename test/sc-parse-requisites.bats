#!/usr/bin/env bats
# sc-parse --requisites: the absolute URLs a page or a stylesheet needs to
# be displayed, in document order, each once; null for what is neither;
# the count contract kept.  Malformed markup and CSS as the web has them.

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

bats_require_minimum_version 1.5.0

setup() {
	cd "$BATS_TEST_TMPDIR" || return
}

# rec BODY [CONTENT_TYPE [URL]]: an ok fetch record with a text body.
rec() {
	jq -nc --arg b "$1" --arg ct "${2-text/html}" --arg u "${3-http://ex.com/dir/page.html}" \
		'{url: $u, ok: true, status: 200, content_type: $ct, body: $b}'
}

@test "--requisites: a page's stylesheets, scripts, images, srcsets, icons, preloads, posters and style url()s, resolved, once each" {
	cat >page.html <<'EOF'
<html><head><base href="/b/">
<link rel=stylesheet href=s.css><link rel="alternate stylesheet" href=alt.css>
<LINK REL="Shortcut Icon" HREF=/fav.ico><link rel=apple-touch-icon href=touch.png>
<link rel=preload as=font href=f.woff2 crossorigin><link rel=preload as=fetch href=data.json>
<link rel=preload as=image imagesrcset="p1.png 1x, p2.png 2x"><link rel=modulepreload href=m.js>
<link rel=alternate href=feed.xml><link rel=canonical href=/c.html><link rel=next href=2.html>
<script src='//cdn.ex.net/j.js'></script><script>var u = "url(no-script.png)";</script>
<style>@import 'i.css'; body{background:URL( "bg.png" )} /* url(no-comment.png) */
.a{x:myurl(no-name.png)} .b{content:"url(no-string.png)"} .c{background:url(data:image/png;base64,AAAA)}
</style>
<body style='background-image: url(st.png), url("s t.png")' background=bodybg.gif>
<img src=a.png srcset='a1.png 1x,a2.png 2x, a,3.png 3x'><img src="s.png#frag">
<picture><source srcset='p.webp 100w, p-2.webp 200w' type=image/webp><img src=a.png></picture>
<video poster=v.jpg><source src=v.mp4></video><input type=image src=go.png>
<img src="javascript:void(0)"><img src=""><img src="mailto:x@y"><td background=cell.png>
<a href=page2.html style="color:red">a link, no requisite</a><iframe src=frame.html></iframe>
EOF
	rec "$(cat page.html)" >in.jsonl
	run -0 sc-parse --requisites <in.jsonl
	jq -r '.requisites[]' <<<"$output" >got
	cat >want <<'EOF'
http://ex.com/b/s.css
http://ex.com/b/alt.css
http://ex.com/fav.ico
http://ex.com/b/touch.png
http://ex.com/b/f.woff2
http://ex.com/b/p1.png
http://ex.com/b/p2.png
http://ex.com/b/m.js
http://cdn.ex.net/j.js
http://ex.com/b/i.css
http://ex.com/b/bg.png
http://ex.com/b/bodybg.gif
http://ex.com/b/st.png
http://ex.com/b/s%20t.png
http://ex.com/b/a.png
http://ex.com/b/a1.png
http://ex.com/b/a2.png
http://ex.com/b/a,3.png
http://ex.com/b/s.png
http://ex.com/b/p.webp
http://ex.com/b/p-2.webp
http://ex.com/b/v.jpg
http://ex.com/b/go.png
http://ex.com/b/cell.png
EOF
	diff -u want got
	# The default fields are still there, the links apart from the requisites.
	jq -e '.links == ["http://ex.com/b/page2.html"]' <<<"$output"
}

@test "--requisites: a stylesheet's @imports, url()s and image-set()s against its own URL, escapes decoded; null for what is neither HTML nor CSS; one record per line" {
	{
		rec '@charset "utf-8"; @import url("base.css") screen; @IMPORT '"'"'more.css'"'"';
@font-face{src:url(../f/x.woff2) format("woff2"),url( '"'"'../f/x.woff'"'"' )}
.x{background:image-set("i1.png" 1x, '"'"'i2.png'"'"' 2x)} .e{content:"url(no.png)"} .q{b:url(\61 b.png)}
/* @import "commented.css"; */ .u{b:url(unclosed.png' 'text/css; charset=utf-8' 'http://cdn.ex.net/css/site.css'
		rec 'PNG' image/png http://ex.com/i.png
		echo '{"url":"http://ex.com/t","ok":false,"error":{"kind":"timeout","message":"t"}}'
		echo 'not json'
		rec '<p>no requisites</p>'
	} >in.jsonl
	run -3 --separate-stderr sc-parse --requisites <in.jsonl
	[[ $stderr == *'<stdin>:4: not valid JSON'* ]]
	printf '%s\n' "$output" >out.jsonl
	[ "$(wc -l <out.jsonl)" -eq 5 ]
	jq -c '.requisites' out.jsonl >got
	cat >want <<'EOF'
["http://cdn.ex.net/css/base.css","http://cdn.ex.net/css/more.css","http://cdn.ex.net/f/x.woff2","http://cdn.ex.net/f/x.woff","http://cdn.ex.net/css/i1.png","http://cdn.ex.net/css/i2.png","http://cdn.ex.net/css/ab.png","http://cdn.ex.net/css/unclosed.png"]
null
null
null
[]
EOF
	diff -u want got
	run -2 sc-parse --requisites --forms </dev/null
	run -2 sc-parse --requisites -f 'requisites=a' </dev/null
	assert_output --partial 'choose another name'
}
