"""Analytics: recording clarification questions and answers from finished turns and
summarizing them into alias suggestions. Sits above dialogue and kg; never imports fastapi."""
