import { formatClock, formatClockMs } from '../../format';
import { AXIS_H, ROW_H, type TimelineLayout } from '../../lending/timeline-layout';

export interface PaintColors {
  text: string;
  muted: string;
  border: string;
  surface: string;
}

/**
 * Paints a laid-out timeline on a 2D canvas context, nothing more (the layout decided every rectangle and colour):
 * the axis with its ticks, each row's label and rule, the rectangles in order, the hovered one outlined.
 */
export function paintTimeline(
  ctx: CanvasRenderingContext2D,
  layout: TimelineLayout,
  colors: PaintColors,
  hovered: number | null,
  dpr: number,
): void {
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, layout.width, layout.height);
  ctx.font = '11px ui-monospace, monospace';
  ctx.textBaseline = 'middle';
  ctx.lineWidth = 1;
  ctx.strokeStyle = colors.border;
  ctx.fillStyle = colors.muted;
  for (const t of layout.ticks) {
    ctx.beginPath();
    ctx.moveTo(Math.round(t.x) + 0.5, AXIS_H - 4);
    ctx.lineTo(Math.round(t.x) + 0.5, layout.height);
    ctx.stroke();
    const label = t.ms ? formatClockMs(t.at) : formatClock(t.at);
    if (t.x + 3 + ctx.measureText(label).width <= layout.width) ctx.fillText(label, t.x + 3, AXIS_H / 2);
  }
  ctx.fillStyle = colors.text;
  for (const r of layout.rows) {
    ctx.fillText(r.label, 4, r.y + ROW_H / 2 - 2, layout.plotX - 8);
    ctx.beginPath();
    ctx.moveTo(0, r.y + ROW_H - 0.5);
    ctx.lineTo(layout.width, r.y + ROW_H - 0.5);
    ctx.stroke();
  }
  ctx.save();
  ctx.beginPath();
  ctx.rect(layout.plotX, 0, layout.width - layout.plotX, layout.height);
  ctx.clip();
  let color = '';
  for (const r of layout.rects) {
    if (r.color !== color) ctx.fillStyle = color = r.color;
    ctx.fillRect(r.x, r.y, r.w, r.h);
  }
  if (hovered !== null) {
    ctx.strokeStyle = colors.text;
    ctx.lineWidth = 2;
    for (const r of layout.rects) if (r.event === hovered) ctx.strokeRect(r.x - 1, r.y - 1, r.w + 2, r.h + 2);
  }
  ctx.restore();
}
