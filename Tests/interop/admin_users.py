"""Drives the gateway's admin user API with the official firebase-admin SDK, the way an
application pointed at an emulator does (FIREBASE_AUTH_EMULATOR_HOST): for the project's
users and, through tenant_mgt.auth_for_tenant, for a tenant's. Prints "ok" when every
check passed; any failed check raises (exit status 1).

Usage: admin_users.py <host:port> <project id> <tenant id> <api key>

The tenant allows password sign-in: a user imported there with a Firebase scrypt hash
(made here, by make_password_hashes.py's independent implementation) signs in over REST.
"""

import json
import os
import secrets
import sys
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_password_hashes import firebase_scrypt  # noqa: E402


def check(condition, message):
    if not condition:
        raise AssertionError(message)


def email_links(client, label):
    """generate_*_link: the gateway's action page, for this scope's tenant."""
    for link, mode in [
        (client.generate_password_reset_link("ada@example.com"), "resetPassword"),
        (client.generate_email_verification_link("ada@example.com"), "verifyEmail"),
    ]:
        query = urllib.parse.parse_qs(urllib.parse.urlparse(link).query)
        check(urllib.parse.urlparse(link).path == "/__/auth/action", f"{label} link {link}")
        check(query.get("mode") == [mode] and len(query.get("oobCode", [""])[0]) >= 43, f"{label} link {link}")
        check(query.get("tenantId") == ([client.tenant_id] if client.tenant_id else None), f"{label} link tenant {link}")


def import_with_scrypt(client, auth, label, host, api_key):
    """import_users with Firebase's scrypt hash configuration; the imported user keeps their password."""
    password, salt, separator, key = "imported-" + secrets.token_hex(4), secrets.token_bytes(12), b"\x07", secrets.token_bytes(64)
    password_hash = firebase_scrypt(password.encode(), salt, separator, key, 8, 14)
    email = f"{label}-imported@example.com"
    result = client.import_users(
        [auth.ImportUserRecord(uid=f"{label}-imported", email=email, password_hash=password_hash, password_salt=salt)],
        hash_alg=auth.UserImportHash.scrypt(key=key, rounds=8, memory_cost=14, salt_separator=separator))
    check(result.success_count == 1 and result.failure_count == 0, f"import_users {[e.reason for e in result.errors]}")
    check(client.get_user_by_email(email).uid == f"{label}-imported", "imported user found")
    if client.tenant_id is None:
        return
    body = json.dumps({"email": email, "password": password, "tenantId": client.tenant_id}).encode()
    request = urllib.request.Request(
        f"http://{host}/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword?key={api_key}", data=body,
        headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request) as answer:
        check(json.load(answer)["localId"] == f"{label}-imported", "imported user signs in with the original password")


def exercise(client, auth, label, host, api_key):
    """Every user-management call the task names, against one scope."""
    uid = f"{label}-ada"
    created = client.create_user(uid=uid, email="Ada@Example.com", password="secret12", display_name="Ada")
    check(created.uid == uid, f"create_user returned {created.uid}")
    user = client.get_user(uid)
    check(user.email == "ada@example.com", f"email {user.email}")
    check(user.display_name == "Ada" and not user.email_verified and not user.disabled, "profile after create")
    check(user.tenant_id == client.tenant_id, f"tenant_id {user.tenant_id} != {client.tenant_id}")
    check([p.provider_id for p in user.provider_data] == ["password"], f"providers {user.provider_data}")
    check(user.user_metadata.creation_timestamp > 0, "creation timestamp")
    check(client.get_user_by_email("ADA@example.com").uid == uid, "get_user_by_email")

    try:
        client.create_user(uid=uid)
        raise AssertionError("duplicate uid accepted")
    except auth.UidAlreadyExistsError:
        pass
    try:
        client.create_user(email="ada@example.com")
        raise AssertionError("duplicate email accepted")
    except auth.EmailAlreadyExistsError:
        pass

    client.update_user(uid, email_verified=True, disabled=True)
    user = client.get_user(uid)
    check(user.email_verified and user.disabled, "update_user(email_verified=True, disabled=True)")
    client.update_user(uid, disabled=False, display_name=auth.DELETE_ATTRIBUTE)
    user = client.get_user(uid)
    check(not user.disabled and user.display_name is None, "enable and delete the display name")

    client.set_custom_user_claims(uid, {"role": "admin", "level": 3})
    check(client.get_user(uid).custom_claims == {"role": "admin", "level": 3}, "custom claims")
    client.set_custom_user_claims(uid, None)
    check(client.get_user(uid).custom_claims is None, "claims cleared")

    before = int(time.time())
    client.revoke_refresh_tokens(uid)
    valid_after = client.get_user(uid).tokens_valid_after_timestamp
    check(valid_after >= before * 1000, f"tokens_valid_after_timestamp {valid_after} < {before * 1000}")

    bulk = [f"{label}-bulk-{index}" for index in range(5)]
    for other in bulk:
        client.create_user(uid=other)
    page = client.list_users(max_results=2)
    check(len(page.users) == 2 and page.has_next_page, "first page of two")
    listed = [record.uid for record in client.list_users(max_results=2).iterate_all()]
    check(listed == sorted(listed), f"uid order {listed}")
    check(sorted(listed) == sorted([uid] + bulk), f"every user once: {listed}")

    found = client.get_users([
        auth.UidIdentifier(uid), auth.EmailIdentifier("ada@example.com"), auth.PhoneIdentifier("+15555550100"),
        auth.UidIdentifier("nobody"),
    ])
    check([record.uid for record in found.users] == [uid], f"get_users found {found.users}")
    check(len(found.not_found) == 2, f"not found: {found.not_found}")

    email_links(client, label)
    import_with_scrypt(client, auth, label, host, api_key)
    client.delete_user(f"{label}-imported")

    client.delete_user(uid)
    try:
        client.get_user(uid)
        raise AssertionError("deleted user still found")
    except auth.UserNotFoundError:
        pass
    result = client.delete_users(bulk)
    check(result.success_count == 5 and result.failure_count == 0, f"delete_users {result.errors}")
    check(list(client.list_users().iterate_all()) == [], "everyone deleted")


def main() -> int:
    host, project, tenant, api_key = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
    os.environ["FIREBASE_AUTH_EMULATOR_HOST"] = host

    import firebase_admin
    from firebase_admin import auth, credentials, tenant_mgt
    from google.auth.credentials import AnonymousCredentials

    class NoCredential(credentials.Base):
        """tenant_mgt asks the app for a credential up front; with an emulator host the
        auth clients send the SDK's own emulator credential instead."""

        def get_credential(self):
            return AnonymousCredentials()

    app = firebase_admin.initialize_app(NoCredential(), options={"projectId": project}, name="portcullis-admin-users")
    exercise(auth.Client(app), auth, "project", host, api_key)
    exercise(tenant_mgt.auth_for_tenant(tenant, app=app), auth, "tenant", host, api_key)
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
