{
  "algorithm": "ed25519",
  "pubkey": "6kozs5ey44jcees417bpf99rchoutjdz8x175zh8jeqw5fr4eaoo",
  "signature": "Wjp2oGMxdyxb4pDqYQBpYtINCDaoTazWLVpy3TUgkel+9UC+fQRp8oJ8n9hBzsXa/x9EB0qj2DULJbLAEpaeAg==",
  "signed_at": "2026-11-21T10:48:32Z",
  "signed_sha256": "1b8fd0f017ecc65411b598c8f609f5cdb1ccb436665cd32c3e211733318fe60b"
}
