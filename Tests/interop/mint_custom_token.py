"""Mints a custom token with the official firebase-admin SDK, offline, from a
service-account file the gateway issued; prints the token.

Usage: mint_custom_token.py <service-account.json> <uid> <claims JSON or ""> [tenant id]
"""

import json
import sys

import firebase_admin
from firebase_admin import auth, credentials, tenant_mgt


def main() -> int:
    path, uid, claims_text = sys.argv[1], sys.argv[2], sys.argv[3]
    tenant = sys.argv[4] if len(sys.argv) > 4 else None
    claims = json.loads(claims_text) if claims_text else None
    app = firebase_admin.initialize_app(credentials.Certificate(path), name="portcullis-interop")
    if tenant:
        token = tenant_mgt.auth_for_tenant(tenant, app=app).create_custom_token(uid, claims)
    else:
        token = auth.create_custom_token(uid, claims, app=app)
    print(token.decode() if isinstance(token, bytes) else token)
    return 0


if __name__ == "__main__":
    sys.exit(main())
