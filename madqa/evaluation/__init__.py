"""Evaluation of madqa runs: official MADQA metrics (``metrics``), run reports
(``report``) and question-set loading (``questions``)."""
