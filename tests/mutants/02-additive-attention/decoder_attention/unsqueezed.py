# Returns the (B, 1, ...) results without removing the query axis.
def decoder_attention(attention, state, encoder_outputs, source_mask):
    return attention(state[:, None, :], encoder_outputs, encoder_outputs, source_mask[:, None, :])


def build_model():
    return Seq2Seq(Encoder(), Decoder(AdditiveAttention(HIDDEN, HIDDEN, HIDDEN)))
