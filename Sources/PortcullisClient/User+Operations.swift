/// What a user does with its own session: reload, change its profile and credentials,
/// reauthenticate, link and unlink providers, delete itself.
extension User {
    /// A profile field to change: set to a value, or removed.
    public enum ProfileValue: Sendable, Equatable {
        /// Set the field.
        case set(String)
        /// Remove the field.
        case remove
    }

    /// Fetches the profile again: changes made on another device or by an administrator
    /// (a verified email, a new display name, a linked provider) appear.
    public func reload() async throws {
        let record = try await authorized { try await api.lookup(idToken: $0) }
        let wasAnonymous = isAnonymous
        await updateProfile { $0 = record.profile(isAnonymous: wasAnonymous) }
    }

    /// Changes the display name and photo URL; a field left `nil` stays as it is.
    public func updateProfile(displayName: ProfileValue? = nil, photoURL: ProfileValue? = nil) async throws {
        try await update { idToken in
            var fields: [String: IdentityToolkitClient.Field] = ["idToken": .string(idToken)]
            var removed: [String] = []
            switch displayName {
            case .set(let name): fields["displayName"] = .string(name)
            case .remove: removed.append("DISPLAY_NAME")
            case nil: break
            }
            switch photoURL {
            case .set(let url): fields["photoUrl"] = .string(url)
            case .remove: removed.append("PHOTO_URL")
            case nil: break
            }
            if !removed.isEmpty { fields["deleteAttribute"] = .strings(removed) }
            return fields
        }
    }

    /// Changes the email at once (needs a recent sign-in: else
    /// ``AuthClientError/Code/requiresRecentLogin``). The gateway ends every other session;
    /// this one continues with the tokens it answers with.
    public func updateEmail(_ email: String) async throws {
        try await update { ["idToken": .string($0), "email": .string(email), "returnSecureToken": .bool(true)] }
    }

    /// Changes the password (needs a recent sign-in). The gateway ends every other
    /// session; this one continues with the tokens it answers with.
    public func updatePassword(_ password: String) async throws {
        try await update { ["idToken": .string($0), "password": .string(password), "returnSecureToken": .bool(true)] }
    }

    /// Sends the user a link that verifies its email.
    public func sendEmailVerification() async throws {
        let _: EmailActionResponse = try await authorized { idToken in
            try await api.post("accounts:sendOobCode", ["requestType": .string("VERIFY_EMAIL"), "idToken": .string(idToken)])
        }
    }

    /// Sends `newEmail` a link; the email changes when the link is used.
    public func sendVerification(beforeUpdatingEmail newEmail: String) async throws {
        let _: EmailActionResponse = try await authorized { idToken in
            try await api.post(
                "accounts:sendOobCode",
                ["requestType": .string("VERIFY_AND_CHANGE_EMAIL"), "idToken": .string(idToken), "newEmail": .string(newEmail)])
        }
    }

    /// Signs in again with `credential`, which must prove this user (else
    /// ``AuthClientError/Code/userMismatch``): a fresh sign-in time for sensitive actions,
    /// and new tokens (reported to the `Auth`'s ID-token listeners).
    public func reauthenticate(with credential: AuthCredential) async throws {
        let answer: SignInResponse
        do {
            answer = try await api.signIn(with: credential)
        } catch let error as AuthClientError where error.code == .userNotFound {
            throw AuthClientError(.userMismatch, serverCode: error.serverCode, detail: error.detail, httpStatus: error.httpStatus)
        }
        guard answer.localId == uid else {
            throw AuthClientError(.userMismatch, detail: "the credential belongs to another user")
        }
        try await replaceTokens(from: answer)
    }

    /// Deletes the account (needs a recent sign-in; the tenant may allow only
    /// administrators: ``AuthClientError/Code/adminRestrictedOperation``) and signs it out.
    public func delete() async throws {
        let _: EmptyResponse = try await authorized { idToken in try await api.post("accounts:delete", ["idToken": .string(idToken)]) }
        await owner?.userSessionEnded(self)
    }

    /// Links `credential` to this user: a password to an anonymous account (the uid stays),
    /// or a federated identity. Fails with ``AuthClientError/Code/emailAlreadyInUse`` or
    /// ``AuthClientError/Code/credentialAlreadyInUse`` when another account has it.
    public func link(with credential: AuthCredential) async throws {
        let answer = try await authorized { try await api.signIn(with: credential, linkingTo: $0) }
        guard answer.localId == nil || answer.localId == uid else {
            throw AuthClientError(.internalError, detail: "the gateway linked another account")
        }
        try await replaceTokens(from: answer)
        let record = try await authorized { try await api.lookup(idToken: $0) }
        await updateProfile { $0 = record.profile(isAnonymous: false) }
    }

    /// Unlinks a provider (`password`, `google.com`, …). The gateway never removes the
    /// last way in.
    public func unlink(_ providerId: String) async throws {
        guard providerData.contains(where: { $0.providerId == providerId }) else {
            throw AuthClientError(.noSuchProvider, detail: "\(providerId) is not linked")
        }
        try await update { ["idToken": .string($0), "deleteProvider": .strings([providerId])] }
    }

    /// `accounts:update` with the fields `fields` makes of the ID token; takes the answer's
    /// profile, and its tokens when it issued some.
    private func update(_ fields: @Sendable (String) -> [String: IdentityToolkitClient.Field]) async throws {
        let answer: UpdateResponse = try await authorized { try await api.post("accounts:update", fields($0)) }
        if answer.tokens.idToken != nil { try await replaceTokens(from: answer.tokens) }
        let wasAnonymous = isAnonymous
        await updateProfile { $0 = answer.record.profile(isAnonymous: wasAnonymous) }
    }
}
