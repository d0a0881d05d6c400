/**
 * Realistic message bodies for generated samples: JSON events of a few kinds
 * (hundreds of bytes to a few KiB, skewed towards the small end the way
 * production topics are) and, on some messages, user headers in Iggy's
 * layout (src/format/user-headers.ts): string keys, string, raw and uint values.
 */
import type { MessageInput } from "../format/encode.js";
import { type UserHeaderEntry, encodeUserHeaders, stringField, uintField } from "../format/user-headers.js";
import type { Prng } from "./prng.js";

const encoder = new TextEncoder();

const WORDS = [
  "alpha",
  "bravo",
  "checkout",
  "delivery",
  "express",
  "fulfilment",
  "gateway",
  "harbor",
  "invoice",
  "journal",
  "kiosk",
  "ledger",
  "merchant",
  "network",
  "order",
  "parcel",
  "quota",
  "refund",
  "shipment",
  "ticket",
  "upsell",
  "voucher",
  "warehouse",
  "xpress",
  "yield",
  "zone",
];
const CITIES = ["Berlin", "Kraków", "Lisbon", "Oslo", "Osaka", "Nairobi", "Lima", "Austin", "Perth", "Toronto"];
const EVENTS = ["order.created", "order.paid", "order.shipped", "cart.updated", "user.signed_in", "page.viewed"];
const SOURCES = ["checkout-svc", "web-frontend", "mobile-ios", "mobile-android", "billing-svc"];

/** Target body size: mostly a few hundred bytes, a long tail to a few KiB. */
function targetPayloadBytes(rng: Prng): number {
  const roll = rng.float();
  if (roll < 0.7) return rng.int(180, 1200);
  if (roll < 0.95) return rng.int(1200, 4096);
  return rng.int(4096, 7168);
}

function hex(rng: Prng, bytes: number): string {
  let out = "";
  for (let i = 0; i < bytes; i++) out += rng.int(0, 255).toString(16).padStart(2, "0");
  return out;
}

function eventJson(rng: Prng, offset: bigint, timestampMicros: bigint, targetBytes: number): string {
  const event = rng.pick(EVENTS);
  const items = rng.int(1, 6);
  const lines: string[] = [];
  for (let i = 0; i < items; i++) {
    lines.push(
      `{"sku":"${rng.pick(WORDS).toUpperCase()}-${rng.int(1000, 9999)}","qty":${rng.int(1, 5)},"price_cents":${rng.int(99, 49999)}}`,
    );
  }
  const head =
    `{"event":"${event}","seq":${offset},"ts_us":${timestampMicros},"customer":"c-${hex(rng, 6)}",` +
    `"city":"${rng.pick(CITIES)}","items":[${lines.join(",")}]`;
  let note = "";
  const room = targetBytes - head.length - 12;
  while (note.length < room) note += (note.length === 0 ? "" : " ") + rng.pick(WORDS);
  return note.length > 0 ? `${head},"note":"${note.slice(0, Math.max(0, room))}"}` : `${head}}`;
}

export function makeMessage(
  rng: Prng,
  offset: bigint,
  indexInBatch: number,
  timestampMicros: bigint,
  timestampDelta: number,
): MessageInput {
  const payload = encoder.encode(eventJson(rng, offset, timestampMicros, targetPayloadBytes(rng)));
  const message: MessageInput = { id: rng.u128(), offsetDelta: indexInBatch, timestampDelta, payload };
  if (rng.chance(0.3)) {
    const traceId = new Uint8Array(16);
    for (let i = 0; i < traceId.length; i++) traceId[i] = rng.int(0, 255);
    const headers: UserHeaderEntry[] = [
      { key: stringField("content-type"), value: stringField("application/json") },
      { key: stringField("trace-id"), value: { kind: "raw", bytes: traceId } },
    ];
    if (rng.chance(0.5)) headers.push({ key: stringField("source"), value: stringField(rng.pick(SOURCES)) });
    // Derived from bytes already drawn, so adding it did not shift the generator's random sequence.
    if (traceId[0]! % 4 === 0) headers.push({ key: stringField("attempt"), value: uintField("uint32", BigInt(1 + (traceId[1]! % 5))) });
    message.userHeaders = encodeUserHeaders(headers);
  }
  return message;
}
