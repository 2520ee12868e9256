"""What the test files share: tokenizer loading, derender clients and body builders, the parser
tests' oracle and client, the server tests' process harness."""
