// Progressive enhancement only: every page is complete without this script.
// Adds a "changes only" switch to each PTX diff.
document.addEventListener('DOMContentLoaded', () => {
  for (const table of document.querySelectorAll('table.diff')) {
    const button = document.createElement('button');
    button.type = 'button';
    button.textContent = 'changes only';
    button.addEventListener('click', () => {
      const on = table.classList.toggle('changes-only');
      button.textContent = on ? 'all lines' : 'changes only';
    });
    table.parentNode.insertBefore(button, table);
  }
});
