// assets.html's script (sc-render --block scripts, or '*/app.js').
document.getElementById('text').textContent = ['APP', 'RAN'].join('-');
