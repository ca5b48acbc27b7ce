/**
 * Saves a blob as a file from the page: a Blob URL on a temporary `<a download>`, clicked, then revoked. In Electron
 * and in a browser alike this is a download (no new window, nothing left in history).
 */
export function saveBlob(blob: Blob, fileName: string, doc: Document = document): void {
  const url = URL.createObjectURL(blob);
  const a = doc.createElement('a');
  a.href = url;
  a.download = fileName;
  a.rel = 'noopener';
  a.style.display = 'none';
  doc.body.appendChild(a);
  try {
    a.click();
  } finally {
    a.remove();
    // Revoked after the click has been handled: the download has its own reference by then.
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  }
}
