// Preloaded (node --import) into the mcpb CLI by pack.sh so that packing
// the same files twice gives the same bytes. `mcpb pack` stamps every zip
// entry with the time of packing (fflate's mtime: new Date()); here the
// argument-less Date and Date.now() answer SOURCE_DATE_EPOCH instead, the
// reproducible-builds convention for "the time this build claims". Dates
// built from arguments are untouched. fflate writes the stamp as a DOS
// date in local time, so pack.sh also sets TZ=UTC.
const seconds = Number(process.env.SOURCE_DATE_EPOCH);
// A zip (DOS) date cannot say anything before 1980-01-01.
if (!Number.isSafeInteger(seconds) || seconds < 315532800) {
  throw new Error(`fixdate.mjs: SOURCE_DATE_EPOCH must be whole seconds since 1970, from 1980 on; got ${JSON.stringify(process.env.SOURCE_DATE_EPOCH)}`);
}
const pinned = seconds * 1000;
const RealDate = Date;
globalThis.Date = class extends RealDate {
  constructor(...args) {
    if (args.length === 0) super(pinned);
    else super(...args);
  }
  static now() {
    return pinned;
  }
};
