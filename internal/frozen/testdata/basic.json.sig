{
  "algorithm": "ed25519",
  "pubkey": "8j33hcqfktweq6kw58y6xkbrufpg6xo5h6oafewg15qqscjag6my",
  "signature": "dGNMlDzZabUO5Ub3DS1PMloj4iVZ63bg4NcSjn/vjoHxLvsOowSFf4sWMOjm1DpWxPFpcqrXS0Pdj9HNyv88CA==",
  "signed_sha256": "40aa6c513a408d225a6401e5daa5f731a72aa974ca373b0a7492560cc5c465aa",
  "signed_at": "2026-11-21T12:00:00Z"
}
