"""LLM judges run from inside a study: prompts, reply parsing and the runner."""
