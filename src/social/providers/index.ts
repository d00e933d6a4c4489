import type { SocialProvider } from '../provider.js';
import type { ProviderId } from '../settings.js';
import { apple } from './apple.js';
import { discord } from './discord.js';
import { facebook } from './facebook.js';
import { github } from './github.js';
import { google } from './google.js';
import { microsoft } from './microsoft.js';

/** The six providers of the contract, one file each. */
export const PROVIDERS: Record<ProviderId, SocialProvider> = { google, github, facebook, apple, discord, microsoft };
