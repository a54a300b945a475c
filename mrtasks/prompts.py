"""The paper's prompts (Appendix A) and the functions that turn a row into chat messages.

Task prompts are chat conversations (system + user) in the format TRL and `apply_chat_template`
expect: `[{"role": "system", "content": ...}, {"role": "user", "content": ...}]`.
"""

from __future__ import annotations

Messages = list[dict[str, str]]

# --- Curation (Appendix A.1) -------------------------------------------------------------------

FORMULA_EXTRACTION_PROMPT = """\
You are a helpful assistant.

Task: Extract the most key formulas or theorem names from the following original answer text and save them in JSON format.

Output Format: Return the key formulas or theorem names in a JSON object with the following structure:
{
    "theorems": [
        "Theorem or formula name 1",
        "Theorem or formula name 2",
        "Theorem or formula name 3",
        // Continue until all key formulas or theorem names are included
    ]
}

Requirements:
- Extract only the content from the original text without adding new formulas or theorems.
- Use standard LaTeX format for all mathematical symbols and expressions.
- Sort the extracted theorems by importance, placing the most important ones first and the less important ones later.
- The output must comply with JSON format and be ready for use."""

STEP_SPLIT_PROMPT = """\
You are a helpful assistant.

Task: Split the following answer into independent logical steps while maintaining the original meaning of the content.

Output Format: Return the steps in a JSON object with the following structure:
{
    "steps": [
        "Step 1 description...",
        "Step 2 description...",
        "Step 3 description...",
        // Continue until all steps are included
    ]
}

Requirements:
- All steps must be generated from the original answer text without creating new steps or content.
- Each step should maintain an independent logical meaning, allowing it to stand alone.
- The steps should connect logically in a way that reconstructs the original answer when combined together.
- Ensure clarity and conciseness in each step to facilitate understanding.
- Use standard LaTeX format for all mathematical symbols and expressions."""

# The paper refines DeepMath's R1 traces with o3-mini but does not print that prompt; this one
# states the goal it describes (clean step-by-step reasoning, no redundant self-verification).
REFINE_PROMPT = """\
You are a helpful assistant.

Task: Rewrite the following solution into a clean, concise, step-by-step derivation.

Requirements:
- Keep every mathematical step needed to reach the final answer, in order, and keep the final answer unchanged.
- Remove self-verification, restarts, hesitation and redundant re-derivations.
- Do not add new methods, facts or steps that are not in the original solution.
- Use standard LaTeX format for all mathematical symbols and expressions, delimited by $...$ or \\[...\\].
- Return only the rewritten solution, with no preamble."""

# --- Tasks (Appendix A.2) ----------------------------------------------------------------------

MASKED_THEN_FILL_SYSTEM_PROMPT = """\
A conversation between the User and the Assistant.

The User supplies a mathematical statement together with a partial solution in which some formulas or theorems are masked with <formula_masked> tags.

The Assistant's task is to complete the missing portions of the solution by replacing the <formula_masked> tags with the appropriate mathematical formulas or theorems.

Please adhere to the following structured approach:
1. Begin by performing a comprehensive logical analysis to determine the precise formula required for each <formula_masked> tag. The objective is to ensure the logical coherence and completeness of the entire solution.
2. Enclose your **detailed logical analysis**, explaining the derivation of each missing formula, within <think> tags, formatted as follows:
<think>
[Your detailed reasoning process, explaining how each missing formula was derived.]
</think>
3. Finally, upon completion of the analysis and derivation of all missing formulas, provide **only** the derived formulas, enclosed within \\boxed{} notation:
\\boxed{formula_1; formula_2; ...; formula_n}
The formulas within the \\boxed{} answer must appear in the same order as their corresponding <formula_masked> tags in the original solution. All mathematical formulas should be presented using proper LaTeX notation."""

STEP_REORDERING_SYSTEM_PROMPT = """\
A conversation between the User and the Assistant.

The User supplies a mathematical statement and a solution whose steps are out of order (each step is already numbered with 'Step i').

The Assistant's task is to determine the correct logical sequence of these steps.

Please adhere to the following structured approach:
1. Begin by performing a comprehensive logical analysis of the mathematical statement and all given steps to establish their correct sequential order. The objective is to reconstruct a logically sound and complete solution.
2. Enclose your **detailed logical analysis**, explaining how you determined the correct sequence, within <think> tags, formatted as follows:
<think>
[Your detailed reasoning process, explaining how the logical sequence of steps was determined.]
</think>
3. Finally, provide **only** the correct sequence of step numbers, enclosed within \\boxed{} notation:
\\boxed{n1, n2, n3, ..., nk}
The step numbers within the \\boxed{} answer must represent the final, logically ordered sequence of the steps."""

OUTCOME_SYSTEM_PROMPT = """\
A conversation between User and Assistant.

The User provides a question, and the Assistant outputs the answer.

The Assistant's task is to solve the question and provide the final answer.

Please adhere to the following structured approach:
1. Provide a concise solution analysis to determine how to compute the answer and enclose a detailed, step-by-step derivation within <think> tags. Use the following format:
<think>
[Your detailed reasoning process analysis, explained through a step-by-step derivation.]
</think>
2. Finally, provide only the final result written in standard LaTeX and enclosed within \\boxed{ }."""


# Error Correction is not in the paper (its future work asks for it); this prompt follows the
# structure of the Appendix A task prompts above.
ERROR_CORRECTION_SYSTEM_PROMPT = """\
A conversation between the User and the Assistant.

The User supplies a mathematical statement and a step-by-step solution (each step is numbered with 'Step i'). At most one step contains an error: one of its formulas or theorem names has been altered (a number, a sign, an operator, the direction of an inequality, or the name of the theorem applied).

The Assistant's task is to determine which step, if any, is incorrect, and to restore its correct formula or theorem name.

Please adhere to the following structured approach:
1. Begin by performing a comprehensive logical analysis of the mathematical statement and of every step, checking each formula against the statement and against the steps before and after it. The objective is to find any step that breaks the logical soundness of the solution.
2. Enclose your **detailed logical analysis**, explaining how each step was checked and why the incorrect step (if any) is wrong, within <think> tags, formatted as follows:
<think>
[Your detailed reasoning process, explaining how the incorrect step was found and how its formula was corrected.]
</think>
3. Finally, provide **only** the number of the incorrect step and its corrected formula (or theorem name), separated by a semicolon and enclosed within \\boxed{} notation:
\\boxed{k; corrected formula}
If every step is correct, provide \\boxed{none}. The corrected formula is the altered formula (or theorem name) of Step k as it should read, not the whole step, presented using proper LaTeX notation."""


def _chat(system: str, user: str) -> Messages:
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def format_steps(steps: list[str]) -> str:
    """Number steps as the paper shows them: `Step 0: ...`, `Step 1: ...`."""
    return "\n\n".join(f"Step {i}: {s}" for i, s in enumerate(steps))


def masked_then_fill_messages(problem: str, masked_solution: str) -> Messages:
    user = f"The user's statement:\n{problem}\n\nThe partial solution is:\n{masked_solution}"
    return _chat(MASKED_THEN_FILL_SYSTEM_PROMPT, user)


def step_reordering_messages(problem: str, shuffled_steps: list[str]) -> Messages:
    user = f"The user's statement:\n{problem}\n\nThe shuffled solution:\n{format_steps(shuffled_steps)}"
    return _chat(STEP_REORDERING_SYSTEM_PROMPT, user)


def error_correction_messages(problem: str, steps: list[str]) -> Messages:
    user = f"The user's statement:\n{problem}\n\nThe solution to check:\n{format_steps(steps)}"
    return _chat(ERROR_CORRECTION_SYSTEM_PROMPT, user)


def outcome_messages(problem: str) -> Messages:
    # The paper prints "he user's question:" (a typo for "The").
    return _chat(OUTCOME_SYSTEM_PROMPT, f"The user's question:\n{problem}")


def curation_messages(prompt: str, solution: str) -> Messages:
    """A curation request (formula extraction, step split, refine) about one solution text."""
    return _chat(prompt, f"Original answer text:\n{solution}")
