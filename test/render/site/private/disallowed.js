// robots.txt disallows /private/: a polite renderer never fetches this.
document.body.insertAdjacentHTML('beforeend', '<p id="disallowed">ROBOTS-DISALLOWED-RAN</p>');
