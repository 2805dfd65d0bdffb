# Uses the first encoder output as the query: the same attention at every output step.
def decoder_attention(attention, state, encoder_outputs, source_mask):
    context, weights = attention(encoder_outputs[:, :1], encoder_outputs, encoder_outputs, source_mask[:, None, :])
    return context[:, 0], weights[:, 0]


def build_model():
    return Seq2Seq(Encoder(), Decoder(AdditiveAttention(HIDDEN, HIDDEN, HIDDEN)))
