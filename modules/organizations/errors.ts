import { AppError, type ModuleErrorCode } from '../../src/module-api.js';

/** The codes the module answers with (listed in /openapi.json under its tag as `x-error-codes`). */
export const errorCodes: ModuleErrorCode[] = [
  {
    code: 'ORG_FORBIDDEN',
    status: 403,
    description:
      'Not a member of the organization, or the role lacks the permission (or creating organizations is for administrators). The same answer whether or not the organization exists.',
  },
  { code: 'ORG_NOT_FOUND', status: 404, description: 'No such organization (answered to superadmins only; others get ORG_FORBIDDEN).' },
  { code: 'ORG_SLUG_TAKEN', status: 409, description: 'Another organization has this slug.' },
  { code: 'ORG_LAST_OWNER', status: 409, description: 'The change would leave the organization without an owner: make someone else owner first.' },
  { code: 'ORG_MEMBER_NOT_FOUND', status: 404, description: 'The user is not a member of the organization.' },
  { code: 'ORG_ALREADY_MEMBER', status: 409, description: 'The user (or the invited email) is already a member.' },
  { code: 'ORG_ROLE_NOT_FOUND', status: 404, description: 'No such custom role in the organization.' },
  { code: 'ORG_ROLE_EXISTS', status: 409, description: 'The organization already has a role of this name (built-in names included).' },
  { code: 'ORG_ROLE_IN_USE', status: 409, description: 'A member or a pending invitation has the role: give them another first.' },
  { code: 'ORG_ROLE_BUILT_IN', status: 409, description: 'owner, admin and member are built in: they cannot be changed or deleted.' },
  { code: 'ORG_INVITATION_PENDING', status: 409, description: 'The email already has a pending invitation to the organization (revoke it to send a new one).' },
  { code: 'ORG_INVITATION_NOT_FOUND', status: 404, description: 'No such pending invitation in the organization.' },
  { code: 'ORG_INVITATION_INVALID', status: 400, description: 'The invitation token is unknown, used, revoked or expired.' },
  { code: 'ORG_INVITATION_MISMATCH', status: 403, description: "The invitation is for another email than the signed-in user's verified one." },
];

export const orgForbidden = (message = 'You may not do this in this organization') => new AppError(403, 'ORG_FORBIDDEN', message);
export const orgNotFound = () => new AppError(404, 'ORG_NOT_FOUND', 'No such organization');
export const slugTaken = () => new AppError(409, 'ORG_SLUG_TAKEN', 'Another organization has this slug', [{ field: 'slug', message: 'is taken' }]);
export const lastOwner = () => new AppError(409, 'ORG_LAST_OWNER', 'An organization needs at least one owner: make another member owner first');
export const memberNotFound = () => new AppError(404, 'ORG_MEMBER_NOT_FOUND', 'The user is not a member of this organization');
