// Replaces #js's text: a page replayed without its script shows the old.
document.addEventListener('DOMContentLoaded', function () {
  var p = document.getElementById('js');
  if (p) { p.textContent = 'app.js ran'; p.style.border = '4px solid #0a0'; }
});
