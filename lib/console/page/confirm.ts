/**
 * Every change is confirmed first (issue 38): a modal `<dialog>` that says what will happen, with
 * Cancel focused, so Enter or Escape on a stray keystroke changes nothing. Resolves true only when
 * the person chose the confirming button.
 */
import { type Child, h } from './dom.ts';

export function confirmChange(options: { title: string; body: Child[]; confirm: string }): Promise<boolean> {
  return new Promise((resolve) => {
    const cancel = h('button', { type: 'button' }, 'Cancel');
    const ok = h('button', { type: 'button', class: 'primary' }, options.confirm);
    const dialog = h(
      'dialog',
      { 'aria-labelledby': 'confirm-title', 'aria-describedby': 'confirm-body' },
      h('h2', { id: 'confirm-title' }, options.title),
      h('div', { id: 'confirm-body' }, options.body),
      h('div', { class: 'buttons' }, cancel, ok),
    );
    const opener = document.activeElement as HTMLElement | null;
    cancel.addEventListener('click', () => dialog.close('cancel'));
    ok.addEventListener('click', () => dialog.close('confirm'));
    dialog.addEventListener('close', () => {
      dialog.remove();
      opener?.focus();
      resolve(dialog.returnValue === 'confirm');
    });
    document.body.append(dialog);
    dialog.showModal();
    cancel.focus();
  });
}
