"""Built-in agent tools: the paper's (search, show_pages, submit_answer) and the navigation tools."""
