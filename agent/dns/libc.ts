/**
 * The few libc calls the batched UDP path needs (`socket`, `bind`, `recvmmsg`, `sendmmsg`, `poll`,
 * an `eventfd` to wake it), opened with `Deno.dlopen`, and the struct layouts they take. Linux
 * x86_64 / aarch64 only (LP64 layouts); {@link openLibc} throws elsewhere and the caller falls
 * back to the plain socket path.
 * @module
 */

/** Constants of Linux's socket API. */
export const LINUX = {
  AF_INET: 2,
  AF_INET6: 10,
  SOCK_DGRAM: 2,
  SOCK_NONBLOCK: 0o4000,
  SOCK_CLOEXEC: 0o2000000,
  SOL_SOCKET: 1,
  SO_RCVBUF: 8,
  SO_SNDBUF: 7,
  IPPROTO_IPV6: 41,
  IPV6_V6ONLY: 26,
  MSG_DONTWAIT: 0x40,
  MSG_TRUNC: 0x20,
  POLLIN: 1,
  EFD_NONBLOCK: 0o4000,
  EFD_CLOEXEC: 0o2000000,
  EAGAIN: 11,
  EINTR: 4,
} as const;

/** sizeof(struct msghdr) on LP64 Linux; `struct mmsghdr` adds msg_len (4) and padding (4). */
export const MSGHDR_SIZE = 56;
/** sizeof(struct mmsghdr). */
export const MMSGHDR_SIZE = 64;
/** sizeof(struct iovec). */
export const IOVEC_SIZE = 16;
/** Room for a sockaddr_in6 (28 bytes), rounded up. */
export const SOCKADDR_SIZE = 32;

const symbols = {
  socket: { parameters: ["i32", "i32", "i32"], result: "i32" },
  bind: { parameters: ["i32", "buffer", "u32"], result: "i32" },
  getsockname: { parameters: ["i32", "buffer", "buffer"], result: "i32" },
  setsockopt: { parameters: ["i32", "i32", "i32", "buffer", "u32"], result: "i32" },
  close: { parameters: ["i32"], result: "i32" },
  recvmmsg: { parameters: ["i32", "buffer", "u32", "i32", "pointer"], result: "i32" },
  sendmmsg: { parameters: ["i32", "buffer", "u32", "i32"], result: "i32" },
  sendto: {
    parameters: ["i32", "buffer", "usize", "i32", "buffer", "u32"],
    result: "isize",
  },
  // The only call that waits, so the only one run off the JS thread.
  poll: { parameters: ["buffer", "u64", "i32"], result: "i32", nonblocking: true },
  eventfd: { parameters: ["u32", "i32"], result: "i32" },
  write: { parameters: ["i32", "buffer", "usize"], result: "isize" },
  inet_pton: { parameters: ["i32", "buffer", "buffer"], result: "i32" },
  __errno_location: { parameters: [], result: "pointer" },
} as const;

/** The libc symbols the batched path calls, `errno` of the last failed call, and `unload`. */
export type Libc = Deno.DynamicLibrary<typeof symbols>["symbols"] & {
  errno(): number;
  unload(): void;
};

/** Opens libc. Throws when FFI is not allowed or this is not LP64 Linux. */
export function openLibc(): Libc {
  if (Deno.build.os !== "linux" || !["x86_64", "aarch64"].includes(Deno.build.arch)) {
    throw new Error(`batched UDP needs Linux x86_64/aarch64, not ${Deno.build.target}`);
  }
  const lib = Deno.dlopen("libc.so.6", symbols);
  const s = lib.symbols;
  return {
    ...s,
    errno: () => {
      const p = s.__errno_location();
      return p ? new Deno.UnsafePointerView(p).getInt32() : 0;
    },
    unload: () => lib.close(),
  };
}

/** The address of a buffer's first byte, as a bigint to store in a struct. */
export function addressOf(buf: Uint8Array): bigint {
  return BigInt(Deno.UnsafePointer.value(Deno.UnsafePointer.of(buf)));
}

/** Builds a sockaddr_in / sockaddr_in6 for `address:port`; throws on a bad address. */
export function sockaddr(libc: Libc, address: string, port: number): Uint8Array {
  const v6 = address.includes(":");
  const out = new Uint8Array(v6 ? 28 : 16);
  const view = new DataView(out.buffer);
  view.setUint16(0, v6 ? LINUX.AF_INET6 : LINUX.AF_INET, true);
  view.setUint16(2, port, false);
  const text = new TextEncoder().encode(address + "\0");
  const dst = out.subarray(v6 ? 8 : 4, v6 ? 24 : 8);
  if (libc.inet_pton(v6 ? LINUX.AF_INET6 : LINUX.AF_INET, text, dst) !== 1) {
    throw new Error(`not an IP address: ${address}`);
  }
  return out;
}

/** The IP address text of a sockaddr (what the rate limiter keys on). */
export function sockaddrIp(sa: Uint8Array, offset: number): string {
  if (sa[offset] === LINUX.AF_INET && sa[offset + 1] === 0) {
    return `${sa[offset + 4]}.${sa[offset + 5]}.${sa[offset + 6]}.${sa[offset + 7]}`;
  }
  const parts: string[] = [];
  for (let i = 0; i < 16; i += 2) {
    parts.push(((sa[offset + 8 + i] << 8) | sa[offset + 9 + i]).toString(16));
  }
  return parts.join(":");
}

/** The port of a sockaddr. */
export function sockaddrPort(sa: Uint8Array): number {
  return (sa[2] << 8) | sa[3];
}
