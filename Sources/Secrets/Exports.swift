// `import Secrets` is the one import a tool needs: the shared-state model and the client types.
@_exported public import SecretClient
@_exported public import SharedState
