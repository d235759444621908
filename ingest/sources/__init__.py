"""One reader per source family: where its data lives and how it reaches `ingest.load`."""
