"""Many answers' sources read as one corpus.

``works`` lays out every source with its work and author (``sources_frame``) and counts them per
work (``works_frame``); ``health`` checks each answer's text against its sources
(``health_frame``); ``cocitation`` counts the works cited together (``cocitation_frame``).
"""
