// A preload that moves this process's clock by EA_TEST_CLOCK_SKEW_MS, as a host whose clock is
// wrong: `node --import=<this file> ...`. Date.now() and new Date() move; monotonic clocks
// (performance.now) and other processes' clocks (dynalite, the emulator) do not.
const skew = Number(process.env.EA_TEST_CLOCK_SKEW_MS ?? 0);
const RealDate = Date;

class SkewedDate extends RealDate {
  constructor(...args) {
    if (args.length === 0) super(RealDate.now() + skew);
    else super(...args);
  }

  static now() {
    return RealDate.now() + skew;
  }
}

globalThis.Date = SkewedDate;
