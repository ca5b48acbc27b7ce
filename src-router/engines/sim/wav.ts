/** Bytes per second the sim assumes for audio that is not WAV: 16 kHz, 16-bit, mono. */
export const RAW_AUDIO_BYTES_PER_SECOND = 32_000;

/** Seconds of audio in a RIFF/WAVE file (from its fmt and data chunks); undefined if not a readable WAV. */
export function wavDurationSeconds(bytes: Buffer): number | undefined {
  if (bytes.length < 12 || bytes.toString('ascii', 0, 4) !== 'RIFF' || bytes.toString('ascii', 8, 12) !== 'WAVE')
    return undefined;
  let byteRate: number | undefined;
  let offset = 12;
  while (offset + 8 <= bytes.length) {
    const id = bytes.toString('ascii', offset, offset + 4);
    const size = bytes.readUInt32LE(offset + 4);
    const body = offset + 8;
    if (id === 'fmt ' && body + 16 <= bytes.length) {
      byteRate = bytes.readUInt32LE(body + 8);
    } else if (id === 'data') {
      if (!byteRate) return undefined;
      // Streamed WAVs write 0 or 0xFFFFFFFF as the data size: trust the bytes present instead.
      const present = bytes.length - body;
      const dataSize = size === 0 || size === 0xffffffff || size > present ? present : size;
      return dataSize / byteRate;
    }
    offset = body + size + (size & 1);
  }
  return undefined;
}

/** Seconds of audio: the WAV header when the file is WAV, else bytes / 32000. */
export function audioSeconds(bytes: Buffer): number {
  return wavDurationSeconds(bytes) ?? bytes.length / RAW_AUDIO_BYTES_PER_SECOND;
}

/** A PCM WAV of `seconds` of a quiet sine tone (for tests and benchmarks). */
export function encodeWav(seconds: number, sampleRate = 16_000, channels = 1): Buffer {
  const samples = Math.round(seconds * sampleRate);
  const dataSize = samples * channels * 2;
  const out = Buffer.alloc(44 + dataSize);
  out.write('RIFF', 0, 'ascii');
  out.writeUInt32LE(36 + dataSize, 4);
  out.write('WAVE', 8, 'ascii');
  out.write('fmt ', 12, 'ascii');
  out.writeUInt32LE(16, 16);
  out.writeUInt16LE(1, 20); // PCM
  out.writeUInt16LE(channels, 22);
  out.writeUInt32LE(sampleRate, 24);
  out.writeUInt32LE(sampleRate * channels * 2, 28);
  out.writeUInt16LE(channels * 2, 32);
  out.writeUInt16LE(16, 34);
  out.write('data', 36, 'ascii');
  out.writeUInt32LE(dataSize, 40);
  for (let i = 0; i < samples; i++) {
    const v = Math.round(Math.sin((2 * Math.PI * 440 * i) / sampleRate) * 3000);
    for (let c = 0; c < channels; c++) out.writeInt16LE(v, 44 + (i * channels + c) * 2);
  }
  return out;
}
