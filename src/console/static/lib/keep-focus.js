/**
 * Runs `task` and then gives the focus back to what held it, if the task took it away: a control disabled while its
 * change saves loses the focus, and a keyboard user would find themselves at the top of the page.
 */
export async function keepingFocus(task) {
  const focused = document.activeElement;
  try {
    return await task();
  } finally {
    // After the render that enables the control again.
    setTimeout(() => {
      const lost = !document.activeElement || document.activeElement === document.body;
      if (lost && focused instanceof HTMLElement && focused.isConnected) focused.focus();
    }, 0);
  }
}
