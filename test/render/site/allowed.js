document.body.insertAdjacentHTML('beforeend', '<p id="allowed">ROBOTS-ALLOWED-RAN</p>');
