const BROWSERS: [RegExp, string][] = [
  [/Edg(e|A|iOS)?\//, 'Edge'],
  [/OPR\/|Opera/, 'Opera'],
  [/SamsungBrowser\//, 'Samsung Internet'],
  [/Firefox\/|FxiOS\//, 'Firefox'],
  [/Chrome\/|CriOS\//, 'Chrome'],
  [/Safari\//, 'Safari'],
  [/okhttp\//i, 'Android app'],
  [/CFNetwork\//, 'iOS app'],
  [/Expo|ReactNative|react-native/i, 'React Native app'],
  [/curl\//i, 'curl'],
  [/node-fetch|undici|axios|node\b/i, 'Node.js'],
  [/python-requests|aiohttp|httpx/i, 'Python'],
];
const SYSTEMS: [RegExp, string][] = [
  [/iPhone|iPod/, 'iPhone'],
  [/iPad/, 'iPad'],
  [/Android/, 'Android'],
  [/Windows/, 'Windows'],
  [/Mac OS X|Macintosh/, 'macOS'],
  [/CrOS/, 'ChromeOS'],
  [/Linux/, 'Linux'],
];

/** The browser and the operating system a User-Agent names (each absent when nothing matches). */
export function deviceParts(userAgent: string | undefined | null): { browser?: string; system?: string } {
  if (!userAgent) return {};
  return { browser: BROWSERS.find(([re]) => re.test(userAgent))?.[1], system: SYSTEMS.find(([re]) => re.test(userAgent))?.[1] };
}

export const UNKNOWN_DEVICE = 'Unknown device';

/** A short human label for a User-Agent ("Chrome on macOS"); "Unknown device" when nothing matches. */
export function describeDevice(userAgent: string | undefined | null): string {
  const { browser, system } = deviceParts(userAgent);
  if (browser && system) return `${browser} on ${system}`;
  return browser ?? system ?? UNKNOWN_DEVICE;
}
